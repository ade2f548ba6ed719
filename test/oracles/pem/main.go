// Answers what Go's encoding/pem says about each query: the first block pem.Decode finds in the
// text, as Tengine-Ingress's checksum of a TLS Secret reads its certificate. One JSON string per
// input line in, one JSON value per line out: {"type": ..., "der": base64 of the bytes}, or null
// when Decode finds no block.
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
)

func answer(text string) any {
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return nil
	}
	return map[string]string{"type": block.Type, "der": base64.StdEncoding.EncodeToString(block.Bytes)}
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	encoder := json.NewEncoder(out)
	for in.Scan() {
		var text string
		if err := json.Unmarshal(in.Bytes(), &text); err != nil {
			panic(err)
		}
		if err := encoder.Encode(answer(text)); err != nil {
			panic(err)
		}
	}
	if err := in.Err(); err != nil {
		panic(err)
	}
}
