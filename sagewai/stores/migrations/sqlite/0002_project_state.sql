-- Small JSON values kept per project (MetadataStore.get_state / set_state), e.g. where the last
-- consolidation run stopped. Deleted with the project.
CREATE TABLE project_state (
    project_id  TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (project_id, key)
);
