// name: RecordMigration
// Records a schema migration as applied, once.
MERGE (m:SchemaMigration {id: $id})
  ON CREATE SET m.appliedAt = datetime()
