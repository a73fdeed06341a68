package serve

// event is a decision due at t about request id: see the kinds.
type event struct {
	t    float64
	seq  int
	id   int
	src  int
	kind eventKind
}

type eventKind uint8

const (
	arrives   eventKind = iota // at the deployment
	prefilled                  // on prefill scheduler src, its KV cache to go
	retry                      // decode scheduler src may have blocks for its transfer queue
	arrived                    // its KV cache at its decode scheduler
)

// events is a binary min-heap of events by time, then by the order
// they were pushed (typed, so that a push does not box its event as
// container/heap's interface would: one allocation per event).
type events []event

func (h events) less(i, j int) bool {
	return h[i].t < h[j].t || h[i].t == h[j].t && h[i].seq < h[j].seq
}

func (h *events) push(e event) {
	*h = append(*h, e)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a.less(i, p) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *events) pop() event {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && a.less(l, m) {
			m = l
		}
		if r := l + 1; r < n && a.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}
