// Package browser holds what ctxgraph gives Neo4j Browser: a GraSS stylesheet that
// captions and colours each label and relationship of the execution graph, and a guide
// (`:guide`) that walks a conversation's lineage, provenance and assemblies. The server
// serves both at /browser/, and the local Neo4j loads the stylesheet on connect.
package browser

import _ "embed"

// Style is the GraSS stylesheet (`:style` takes it, dropped into Browser or by URL).
//
//go:embed ctxgraph.grass
var Style []byte

// Guide is the Browser guide (`:guide <url>`).
//
//go:embed guide.html
var Guide []byte
