// name: ShowIndexes
// The names of the database's online indexes, for the schema check.
SHOW INDEXES YIELD name, state
WHERE state = 'ONLINE'
RETURN name
