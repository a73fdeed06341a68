package workloads
import ("fmt";"strconv";"testing";"os")
func TestZZRows(t *testing.T){
	if os.Getenv("ROWS")=="" { t.Skip() }
	ms,_ := Catalog()
	for _, m := range ms {
		ph := Phase{Kind: Prefill, Batch: 1, Seq: 2048, AllLogits: true}
		if mc := m.Shape().MaxContext; mc > 0 && mc < ph.Seq { ph.Seq = mc }
		ops, err := m.Ops(ph); if err != nil { t.Fatal(err) }
		macs := gemmMACs(ExpandAttention(ops))
		fmt.Printf("%s|%s|%s|%s\n", m.Name(), m.Kind(), strconv.FormatFloat(m.Params(),'f',-1,64), strconv.FormatFloat(macs,'g',4,64))
	}
}
