// Answers what Go's net package says about each query: the parsers ingress-nginx reads source
// ranges with (net.ParseIP, net.ParseCIDR, as internal/net.ParseIPNets calls them) and
// IPNet.Contains. One JSON array per input line in, one JSON value per line out (null: invalid).
//
//	["ip", text]            -> net.ParseIP(text).String()
//	["cidr", text]          -> the *IPNet of net.ParseCIDR(text), .String()
//	["contains", cidr, ip]  -> IPNet.Contains(IP)
//	["trimspace", text]     -> strings.TrimSpace(text), which ParseIPNets applies to each entry
package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"strings"
)

func answer(query []string) any {
	switch query[0] {
	case "ip":
		if ip := net.ParseIP(query[1]); ip != nil {
			return ip.String()
		}
	case "cidr":
		if _, network, err := net.ParseCIDR(query[1]); err == nil {
			return network.String()
		}
	case "contains":
		_, network, err := net.ParseCIDR(query[1])
		ip := net.ParseIP(query[2])
		if err == nil && ip != nil {
			return network.Contains(ip)
		}
	case "trimspace":
		return strings.TrimSpace(query[1])
	default:
		panic("unknown query " + query[0])
	}
	return nil
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	encoder := json.NewEncoder(out)
	for in.Scan() {
		var query []string
		if err := json.Unmarshal(in.Bytes(), &query); err != nil {
			panic(err)
		}
		if err := encoder.Encode(answer(query)); err != nil {
			panic(err)
		}
	}
}
