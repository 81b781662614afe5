-- +goose Up
-- When the restore an approval started ends (done, failed, unknown), the
-- asking agent has news again: its request's answer is rewritten in the
-- past tense (Approvals().News) and told on its next call.
CREATE INDEX approvals_operation ON approvals (operation_id) WHERE operation_id IS NOT NULL;

-- +goose StatementBegin
CREATE FUNCTION approval_restore_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE approvals SET reported = false WHERE operation_id = NEW.id AND state = 'approved' AND reported;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER operations_approval_ended AFTER UPDATE OF state ON operations FOR EACH ROW
    WHEN (NEW.kind = 'restore' AND NEW.state IN ('done', 'failed', 'unknown') AND OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION approval_restore_ended();

-- +goose Down
DROP TRIGGER operations_approval_ended ON operations;
DROP FUNCTION approval_restore_ended();
DROP INDEX approvals_operation;
