// Variables every request carries through the Hono context.
export interface AppEnv {
  Variables: {
    requestId: string;
    /** The contract operation being served (set by the router; request metrics label by it). */
    operationId?: string;
  };
}
