-- Small JSON values kept per project (MetadataStore.get_state / set_state), e.g. where the last
-- consolidation run stopped. Deleted with the project.
CREATE TABLE __SCHEMA__.project_state (
    project_id  text COLLATE "C" NOT NULL,
    key         text COLLATE "C" NOT NULL,
    value       json NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, key)
);
