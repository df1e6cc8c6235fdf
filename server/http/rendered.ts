// A JSON answer rendered before (kept by the cache of rendered pages, page-cache.ts): the router
// writes its text as it is instead of serialising a body. Typed by the body it renders, so a
// handler still cannot answer a shape its operation does not document.
export class RenderedJson<T> {
  /** Only for the type checker: the body this text is the JSON of. */
  declare readonly body?: T;

  constructor(readonly json: string) {}
}
