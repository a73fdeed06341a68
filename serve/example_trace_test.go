package serve_test

import (
	"fmt"
	"strings"

	"github.com/perfsim/perfsim/serve"
)

// ExampleReadTrace reads a trace of three requests (CSV; JSON lines are
// told by their first byte), then a bad one, whose every problem is said
// at once at its file:line:key.
func ExampleReadTrace() {
	const good = `arrival_s,input_tokens,output_tokens
0,1024,128
0.25,512,64
0.5,2048,256
`
	reqs, err := serve.ReadTrace(strings.NewReader(good), "trace.csv", 8192)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range reqs {
		fmt.Println(r.Arrival, r.Input, r.Output)
	}
	const bad = `arrival_s,input_tokens,output_tokens
0,1024,many
1,8000,1000
`
	_, err = serve.ReadTrace(strings.NewReader(bad), "bad.csv", 8192)
	fmt.Println(err)
	// Output:
	// 0 s 1024 128
	// 250 ms 512 64
	// 500 ms 2048 256
	// bad.csv:2: output_tokens: want an integer, got "many"
	// bad.csv:3: input_tokens: 8000 + 1000 output tokens exceed the model's context of 8192
}

// ExampleParseDisagg reads the layout of a disaggregated deployment:
// two prefill instances and one decode instance.
func ExampleParseDisagg() {
	p, d, err := serve.ParseDisagg("2P1D")
	fmt.Println(p, d, err)
	_, _, err = serve.ParseDisagg("2P0D")
	fmt.Println(err)
	// Output:
	// 2 1 <nil>
	// "2P0D": want xPyD with x prefill and y decode instances, each at least 1 (e.g. 2P1D)
}
