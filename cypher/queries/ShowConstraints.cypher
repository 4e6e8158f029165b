// name: ShowConstraints
// The names of the database's constraints, for the schema check.
SHOW CONSTRAINTS YIELD name
RETURN name
