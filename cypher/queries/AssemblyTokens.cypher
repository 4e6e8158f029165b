// name: AssemblyTokens
// The token totals a recorded assembly of the account counted: what it assembled and what
// naive history replay would have sent.
MATCH (a:ContextAssembly {id: $id, accountId: $accountId})
RETURN a.assembledTokens AS assembled, a.baselineTokens AS baseline
