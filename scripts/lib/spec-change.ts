// One change of spec/ that spec:diff reports (spec-diff.ts for the OpenAPI and AsyncAPI
// documents, spec-diff-arazzo.ts for the workflows).
export interface Change {
  /** The document's name: `transactions`, `orders`, …, `webhooks`, `workflows/<file>`. */
  api: string;
  /** `POST /v2/orders`, `message orderPaid`, `operation sendOrderWebhook`, `workflow <id>` or `document`. */
  where: string;
  /** JSON pointer of the change inside `where` (an operation, a message, a workflow, or the document). */
  pointer: string;
  description: string;
  breaking: boolean;
}
