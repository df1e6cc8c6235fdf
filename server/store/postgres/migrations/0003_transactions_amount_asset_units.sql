-- A transaction's amount is in the asset's units only (issue 12): a payment of an order stores
-- it when its base units fit an Amount exactly and NULL otherwise; amount_base_units is its
-- exact amount. Payments of orders recorded before stored their base units in amount: that
-- value meant another unit, so it is cleared (amount_base_units keeps the exact amount).
ALTER TABLE transactions ALTER COLUMN amount DROP NOT NULL;
UPDATE transactions SET amount = NULL WHERE type = 'payment' AND order_id IS NOT NULL;
