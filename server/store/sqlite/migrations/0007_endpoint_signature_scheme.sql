-- 0007_endpoint_signature_scheme: the headers an endpoint's deliveries carry (issue 40,
-- spec WebhookSignatureScheme). Every existing endpoint keeps the Service-Signature scheme.
-- The queue's claim reads it with the secret, at each attempt.
ALTER TABLE webhook_endpoints ADD COLUMN signature_scheme TEXT NOT NULL DEFAULT 'service-signature'
  CHECK (signature_scheme IN ('service-signature', 'standard-webhooks', 'both'));
