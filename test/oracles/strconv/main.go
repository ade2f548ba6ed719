// Answers what Go's strconv says about each input: the parsers ingress-nginx reads annotations
// with (ParseBool, Atoi). One JSON string per input line in, one JSON object per line out.
package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
)

type answer struct {
	Bool    *bool   `json:"bool"`
	Int     *string `json:"int"`
	IntErr  string  `json:"intErr,omitempty"`
	BoolErr string  `json:"boolErr,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	encoder := json.NewEncoder(out)
	for in.Scan() {
		var raw string
		if err := json.Unmarshal(in.Bytes(), &raw); err != nil {
			panic(err)
		}
		var a answer
		if b, err := strconv.ParseBool(raw); err == nil {
			a.Bool = &b
		} else {
			a.BoolErr = err.Error()
		}
		// The int as a decimal string: it may not fit a JavaScript number.
		if i, err := strconv.Atoi(raw); err == nil {
			text := strconv.Itoa(i)
			a.Int = &text
		} else {
			a.IntErr = err.Error()
		}
		if err := encoder.Encode(a); err != nil {
			panic(err)
		}
	}
}
