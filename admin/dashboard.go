package admin

import (
	"embed"
	"io/fs"
	"net/http"
)

// static holds the dashboard: plain HTML, CSS and JavaScript, no build
// step, nothing fetched from elsewhere.
//
//go:embed static
var static embed.FS

// ContentSecurityPolicy is the Content-Security-Policy of every admin
// response: scripts, styles and data from this origin only, no inline
// script or style, no framing, no forms.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// dashboard adds the dashboard's page, assets and JSON endpoints to mux:
// / (the page), /static/ (its script and style), /api/graphs,
// /api/cluster, /api/devices and /api/histogram. Each is read-only (GET
// and HEAD) and reads its data when asked.
func (c *config) dashboard(mux *http.ServeMux) {
	sub, _ := fs.Sub(static, "static")
	files := http.FileServerFS(sub)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, sub, "index.html")
	})
	mux.Handle("GET /static/", http.StripPrefix("/static/", files))
	mux.HandleFunc("GET /api/graphs", c.graphsJSON)
	mux.HandleFunc("GET /api/cluster", c.clusterJSON)
	mux.HandleFunc("GET /api/devices", c.devicesJSON)
	mux.HandleFunc("GET /api/histogram", c.histogram)
}

// secure sets the headers of every admin response: the
// ContentSecurityPolicy, no MIME sniffing, no referrer.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", ContentSecurityPolicy)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		h.ServeHTTP(w, r)
	})
}
