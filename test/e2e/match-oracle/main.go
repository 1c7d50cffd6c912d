// Command match-oracle answers how Go's path/filepath.Match treats a pattern and a name,
// for the webhook's port of it (src/go/filepath-match.ts). One JSON object per line on
// stdin, {"pattern": "...", "name": "..."}; one per line on stdout, in the same order:
// {"matched": true|false} or {"error": "syntax error in pattern"}.
package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
)

type request struct {
	Pattern string `json:"pattern"`
	Name    string `json:"name"`
}

type answer struct {
	Matched bool   `json:"matched"`
	Error   string `json:"error,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var r request
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			_ = out.Encode(answer{Error: "oracle: " + err.Error()})
			continue
		}
		matched, err := filepath.Match(r.Pattern, r.Name)
		a := answer{Matched: matched}
		if err != nil {
			a.Error = err.Error()
		}
		_ = out.Encode(a)
	}
}
