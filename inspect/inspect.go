// Package inspect holds the inspector: one web page, served by ctxgraph at /inspect, that
// answers "why did the model say this?" for a run — the exact request each model call sent
// (checked against its recorded sha256 in the browser), every record included with its form
// and rule, every record left out with its reason, the provenance of a memory down to the
// raw tool output, and what another policy version would have sent. It is plain HTML, CSS
// and JavaScript embedded in the binary, with no build step; it reads only through the REST
// API, with the key the user enters, so it sees exactly what that key may see.
package inspect

import _ "embed"

// Page is the inspector's HTML.
//
//go:embed inspect.html
var Page []byte

// Script is the inspector's JavaScript.
//
//go:embed inspect.js
var Script []byte

// Style is the inspector's stylesheet.
//
//go:embed inspect.css
var Style []byte
