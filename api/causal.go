package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ctxgraph/ctxgraph/model"
)

// maxBookmarks bounds how many bookmarks a request may send back: a client that sends back
// the header of each answer it got holds one or a few.
const maxBookmarks = 16

// minBookmarkBytes and maxBookmarkBytes bound one bookmark; Neo4j 5's are about 40 bytes.
const minBookmarkBytes, maxBookmarkBytes = 4, 512

// causal gives the request a causal chain (DESIGN §11) that starts from the bookmarks the
// client sent back in X-Ctxgraph-Bookmark (repeated, or a comma-separated list), so that its
// reads are served by a database member that has applied them, and answers the chain's
// bookmarks in the same header: the bookmark of the request's last write, or of what its
// reads saw. A streamed answer sends its headers before the turn is recorded, so it
// declares the header as a trailer too and sends it again at its end.
func causal(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sent, err := sentBookmarks(c.Request().Header.Values(model.BookmarkField))
		if err != nil {
			return err
		}
		chain := model.NewCausalChain(sent)
		req := c.Request()
		c.SetRequest(req.WithContext(model.WithCausalChain(req.Context(), chain)))
		res := c.Response()
		trailer := false
		res.Before(func() {
			h := res.Header()
			if bookmarks := chain.Bookmarks(); len(bookmarks) > 0 {
				h.Set(model.BookmarkField, strings.Join(bookmarks, ","))
			}
			if strings.HasPrefix(h.Get(echo.HeaderContentType), "text/event-stream") {
				h.Add("Trailer", model.BookmarkField)
				trailer = true
			}
		})
		err = next(c)
		if trailer {
			res.Header().Set(model.BookmarkField, strings.Join(chain.Bookmarks(), ","))
		}
		return err
	}
}

// sentBookmarks parses the X-Ctxgraph-Bookmark values a client sent. A bookmark is the
// database's opaque value: this checks only its shape, and Neo4j refuses one it did not
// make (model.BookmarkField, 400).
func sentBookmarks(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		for _, b := range strings.Split(v, ",") {
			b = strings.TrimSpace(b)
			if b == "" {
				continue
			}
			// Neo4j takes its bookmarks' first three characters for a prefix and fails with
			// an internal error on a shorter one.
			if len(b) < minBookmarkBytes || len(b) > maxBookmarkBytes || strings.ContainsFunc(b, func(r rune) bool { return r <= ' ' || r > '~' }) {
				return nil, &httpError{status: http.StatusBadRequest, field: model.BookmarkField,
					message: "X-Ctxgraph-Bookmark must be bookmarks ctxgraph answered, separated by commas"}
			}
			out = append(out, b)
		}
	}
	if len(out) > maxBookmarks {
		return nil, &httpError{status: http.StatusBadRequest, field: model.BookmarkField,
			message: "X-Ctxgraph-Bookmark holds more than 16 bookmarks: send back the latest answer's"}
	}
	return out, nil
}
