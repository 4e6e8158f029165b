package main

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/ctxgraph/ctxgraph/cmd/internal/process"
)

// The machine and the store's size on disk, for the report's header.

type sysInfo struct {
	NProc  int
	Mem    string
	CPU    string
	Kernel string
	Neo4j  string
	Code   string
}

func readSysInfo(o options, dataDir string) sysInfo {
	s := sysInfo{NProc: runtime.NumCPU(), Mem: "memory unknown", CPU: "CPU model unknown", Kernel: runtime.GOOS + "/" + runtime.GOARCH}
	if out, err := exec.Command("nproc").Output(); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil {
			s.NProc = n
		}
	}
	if total := process.MemTotal(); total > 0 {
		s.Mem = fmt.Sprintf("%.1f GiB RAM", float64(total)/(1<<30))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				if _, v, ok := strings.Cut(line, ":"); ok {
					s.CPU = strings.TrimSpace(v)
					break
				}
			}
		}
	}
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		s.Kernel = strings.TrimSpace(string(out))
	}
	s.Code = codeVersion()
	s.Neo4j = "version unknown (" + o.neo4jURI + ")"
	if dataDir != "" {
		home := filepath.Dir(dataDir)
		jars, _ := filepath.Glob(filepath.Join(home, "lib", "neo4j-kernel-[0-9]*.jar"))
		if len(jars) > 0 {
			v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(jars[0]), "neo4j-kernel-"), ".jar")
			set := startupSettings(filepath.Join(home, "logs", "debug.log"), "server.memory.heap.max_size",
				"server.memory.pagecache.size", "dbms.memory.transaction.total.max")
			s.Neo4j = fmt.Sprintf("Community %s, the project's local launcher (%s): heap %s, page cache %s, transaction memory %s (as its debug.log reports them); shared with whatever else uses it during the run",
				v, o.neo4jURI, set[0], set[1], set[2])
		}
	}
	return s
}

// codeVersion names the commit the benchmark was built from, from git in the working
// directory (make bench runs in the repository), and says whether tracked files differed from
// it: a report measures the code it names, not whatever is committed later.
func codeVersion() string {
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown (not run in a git checkout)"
	}
	v := "commit " + strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err != nil {
		v += " (working tree not checked)"
	} else if len(strings.TrimSpace(string(st))) > 0 {
		v += " with uncommitted changes to tracked files"
	}
	return v
}

// startupSettings returns the values of the named settings as the last start of Neo4j
// logged them in its debug.log ("?" for one not found).
func startupSettings(debugLog string, names ...string) []string {
	out := make([]string, len(names))
	for i := range out {
		out[i] = "?"
	}
	body, err := os.ReadFile(debugLog)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(body), "\n") {
		line = strings.TrimSpace(line)
		for i, n := range names {
			if v, ok := strings.CutPrefix(line, n+"="); ok {
				out[i] = v
			}
		}
	}
	return out
}

// neo4jDataDir is the Neo4j data directory to measure, when it is known.
func neo4jDataDir(o options) string {
	if o.neo4jData != "auto" {
		return o.neo4jData
	}
	u, err := url.Parse(o.neo4jURI)
	if err != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost") {
		return ""
	}
	home := orDefault(os.Getenv("NEO4J_LOCAL_HOME"), ".neo4j-local")
	dir, err := filepath.Abs(filepath.Join(home, "data"))
	if err != nil {
		return ""
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	return dir
}

// du is `du -sb` of a directory under the Neo4j data directory, or 0.
func (b *bench) du(sub string) int64 {
	if b.dataDir == "" {
		return 0
	}
	return max(duBytes(filepath.Join(b.dataDir, sub)), 0)
}

// duData is `du -sb` of the Neo4j data directory, or -1.
func (b *bench) duData() int64 {
	if b.dataDir == "" {
		return -1
	}
	return duBytes(b.dataDir)
}

func duBytes(dir string) int64 {
	// du exits non-zero when Neo4j removes a file (a rotated transaction log) while it
	// walks; it still prints the total, so the exit status alone is not a failure.
	for attempt := 0; attempt < 3; attempt++ {
		out, _ := exec.Command("du", "-sb", dir).Output()
		if f := strings.Fields(string(out)); len(f) > 0 {
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

// dirBytes sums the sizes of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
