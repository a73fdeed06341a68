package main

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/perfsim/perfsim/sim"
)

// appendSweepCSV appends the CSV row of one sweep point (the columns of
// sweepColumns, newline-terminated) to dst: the bytes that
// sweepCSVRow(simulateJSON(...)) gives through encoding/csv, appended
// straight from the report, without building simulate's JSON or a string
// per cell (TestAppendSweepCSV checks the two agree). e and c are the
// point's energy and cost, nil for none; cal its device's calibration
// label.
func appendSweepCSV(dst []byte, r *sim.Report, cal string, e *energyJSON, c *costJSON) []byte {
	return appendSweepRow(dst, r, appendCSVField(nil, cal), e, c)
}

// appendSweepRow is appendSweepCSV with the calibration label's field
// already encoded (calCSV): a sweep encodes each device's once.
func appendSweepRow(dst []byte, r *sim.Report, calCSV []byte, e *energyJSON, c *costJSON) []byte {
	sc := r.Scenario
	dst = appendCSVField(dst, r.Model)
	dst = append(dst, ',')
	dst = appendCSVField(dst, r.Hardware)
	dst = append(dst, ',')
	dst = append(dst, calCSV...)
	dst = append(dst, ',')
	dst = appendCSVField(dst, sc.Mode.String())
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, int64(r.Devices), 10)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, whole(r.Params), 10)
	// The lengths are empty where they do not apply, as the JSON has
	// none: an image model's input, an encoder's or image model's output.
	for i, v := range [...]int{sc.Batch, sc.Input, sc.Output, max(sc.TP, 1), max(sc.PP, 1)} {
		dst = append(dst, ',')
		if (i == 1 && (r.Arch == sim.CNN || r.Arch == sim.Vision)) || (i == 2 && r.Arch != sim.Decoder) {
			continue
		}
		dst = strconv.AppendInt(dst, int64(v), 10)
	}
	for _, s := range [...]string{sc.Weights.String(), sc.Act.String(), sc.KV.String()} {
		dst = append(dst, ',')
		dst = appendCSVField(dst, s)
	}
	// ttft, tpot, e2e, tokens/s, tokens/s per device, images/s,
	// samples/s: empty where simulate's JSON has none.
	var vals [7]float64
	var has [7]bool
	var prefillBound, decodeBound string
	if in := r.Inference; in != nil {
		vals[0], vals[2] = float64(in.TTFT), float64(in.E2E)
		has[0], has[2] = true, true
		prefillBound = phaseBound(&in.Prefill)
		if r.Arch == sim.Decoder {
			vals[1], vals[3], vals[4] = float64(in.TPOT), in.OutputTokensPerSecond, in.OutputTokensPerSecondPerDevice
			has[1], has[3], has[4] = true, true, true
			if in.Decode != nil {
				decodeBound = in.Decode.Bound.String()
			}
		}
		if r.Unit == "images" {
			vals[5], has[5] = in.ImagesPerSecond, true
		}
		if r.Arch != sim.Decoder {
			vals[6], has[6] = in.SamplesPerSecond, true
		}
	}
	for i, v := range vals {
		dst = append(dst, ',')
		if has[i] {
			dst = appendNum(dst, v)
		}
	}
	dst = append(dst, ',')
	dst = appendCSVField(dst, prefillBound)
	dst = append(dst, ',')
	dst = appendCSVField(dst, decodeBound)
	dst = append(dst, ',')
	dst = strconv.AppendBool(dst, r.Memory.Fits)
	m := r.Memory
	for _, v := range [...]float64{float64(m.Weights), float64(m.KVCache), float64(m.Activations), float64(m.Reserve),
		float64(m.Total), float64(m.Capacity), float64(m.Usable), float64(m.Headroom)} {
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, whole(v), 10) // whole bytes, as the JSON
	}
	// The energy and cost cells (sweepEnergyCells).
	var ev [5]float64
	if e != nil {
		ev = [5]float64{e.AverageW, e.PrefillJTok, e.DecodeJTok, e.JPerOutTok, e.TokensPerJ}
	}
	for _, v := range ev {
		dst = append(dst, ',')
		if v != 0 {
			dst = appendNum(dst, v)
		}
	}
	if c != nil {
		dst = append(dst, ',')
		dst = appendCSVField(dst, c.Currency)
		for _, v := range [...]*float64{c.PerRequest, c.PerMInput, c.PerMOutput} {
			dst = append(dst, ',')
			if v != nil {
				dst = appendNum(dst, *v)
			}
		}
		dst = append(dst, ',')
		dst = appendCSVField(dst, c.Inputs)
	} else {
		dst = append(dst, ",,,,,"...)
	}
	return append(dst, '\n')
}

// appendNum appends v as num formats it.
func appendNum(dst []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		num(v) // panics, saying so
	}
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.AppendFloat(dst, v, 'f', -1, 64)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

// appendCSVField appends s as encoding/csv's Writer writes a field (comma
// separator, no CRLF): quoted, its quotes doubled, when it holds a comma,
// a quote or a line break, starts with a space, or is `\.`.
func appendCSVField(dst []byte, s string) []byte {
	if !csvNeedsQuotes(s) {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		dst = append(append(dst, s[:i]...), `""`...)
		s = s[i+1:]
	}
	return append(append(dst, s...), '"')
}

// csvNeedsQuotes is encoding/csv's Writer.fieldNeedsQuotes for a comma
// separator.
func csvNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` || strings.ContainsAny(s, ",\"\r\n") {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}
