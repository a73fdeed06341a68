package serve

import "testing"

// TestCachedTokens: the prefix cache's hit is whole blocks within the
// prompt less one token (vLLM's get_computed_blocks: max_cache_hit_length
// = num_tokens − 1, matched a full block at a time).
func TestCachedTokens(t *testing.T) {
	for _, c := range []struct {
		input int
		hit   float64
		want  int
	}{
		{1024, 1, 1008}, // before: 1023, not whole blocks
		{1024, 0.5, 512},
		{1025, 1, 1024},
		{1000, 1, 992},
		{1000, 0.999, 992},
		{17, 1, 16},
		{16, 1, 0},
		{15, 1, 0},
		{1024, 0, 0},
	} {
		if got := cachedTokens(Request{Input: c.input}, c.hit, 16, map[int]int{}); got != c.want {
			t.Errorf("%d tokens at hit %g: %d cached, want %d", c.input, c.hit, got, c.want)
		}
	}
	// A shared-prefix id hits only from its second request on a scheduler.
	seen := map[int]int{}
	if a, b := cachedTokens(Request{Input: 64, Prefix: 7}, 0.5, 16, seen), cachedTokens(Request{Input: 64, Prefix: 7}, 0.5, 16, seen); a != 0 || b != 32 {
		t.Errorf("prefix id 7: first %d, second %d cached; want 0 and 32", a, b)
	}
}
