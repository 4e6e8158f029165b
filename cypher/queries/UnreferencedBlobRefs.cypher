// name: UnreferencedBlobRefs
// Of the given blob references, those that no artifact or tool call (of any account) still
// holds: blobs are content-addressed and can be shared.
UNWIND $refs AS ref
WITH ref
WHERE NOT EXISTS { MATCH (a:ToolArtifact {resultRef: ref}) }
  AND NOT EXISTS { MATCH (a:ToolArtifact {argsRef: ref}) }
  AND NOT EXISTS { MATCH (t:ToolCall) WHERE t.argumentsRef = ref }
RETURN collect(ref) AS refs
