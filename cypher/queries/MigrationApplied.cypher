// name: MigrationApplied
// Whether a schema migration has been recorded as applied.
MATCH (m:SchemaMigration {id: $id})
RETURN m.id AS id
