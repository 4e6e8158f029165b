// name: ForgetMigration
// Removes the record of an applied migration so that the next start applies it again.
MATCH (m:SchemaMigration {id: $id})
DELETE m
RETURN count(*) AS forgotten
