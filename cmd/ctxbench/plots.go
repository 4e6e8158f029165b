package main

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The PNG plots of the scale and load phases.

type plotFile struct {
	Title string
	Path  string
}

var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
	{0xff, 0x7f, 0x0e, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
}

// series groups the measured rows by branches × participants, ordered by rounds.
func (b *bench) series() (keys []string, by map[string][]*scaleRow) {
	by = map[string][]*scaleRow{}
	for _, r := range b.sortedRows() {
		if !r.measured() {
			continue
		}
		k := fmt.Sprintf("%d branch%s, %d participant%s", r.Branches, plural(r.Branches, "es"), r.Participants, plural(r.Participants, "s"))
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	return keys, by
}

func (b *bench) makePlots() error {
	if err := os.MkdirAll(b.o.plots, 0o755); err != nil {
		return err
	}
	keys, by := b.series()
	var errs []error
	if len(keys) > 0 {
		errs = append(errs, b.plotTokens(keys, by), b.plotLatency(keys, by))
	}
	if b.load != nil && len(b.load.Levels) > 0 {
		errs = append(errs, b.plotThroughput())
	}
	if b.peers != nil && len(b.peers.Points) > 0 {
		errs = append(errs, b.plotPeers())
	}
	return errors.Join(errs...)
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.X.Label.TextStyle.Font.Size = vg.Points(12)
	p.Y.Label.TextStyle.Font.Size = vg.Points(12)
	p.X.Tick.Label.Font.Size = vg.Points(10)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Add(plotter.NewGrid())
	return p
}

func logAxis(a *plot.Axis) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = logTicks{}
}

// logTicks labels 1, 2 and 5 × 10^k on a log axis (plot.LogTicks labels only powers of
// ten, which leaves a short range with one label), with minor ticks between.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * p
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (hi/lo < 2000 && (m == 2 || m == 5)) {
				t.Label = shortNumber(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// shortNumber writes 20, 500, 2k, 50k, 1M, 0.5.
func shortNumber(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	default:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
}

// headroom raises the top of the y axis so that the legend (top left) clears the data.
func headroom(p *plot.Plot, factor float64) {
	p.Y.Max *= factor
}

func addLine(p *plot.Plot, xys plotter.XYs, c color.Color, dashed bool, shape draw.GlyphDrawer, label string) error {
	l, pts, err := plotterLinePoints(xys)
	if err != nil {
		return err
	}
	l.Color, l.Width = c, vg.Points(1.6)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
	pts.Color, pts.Shape, pts.Radius = c, shape, vg.Points(3)
	p.Add(l, pts)
	p.Legend.Add(label, l, pts)
	return nil
}

func plotterLinePoints(xys plotter.XYs) (*plotter.Line, *plotter.Scatter, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, nil, err
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, nil, err
	}
	return l, s, nil
}

func (b *bench) save(p *plot.Plot, name, title string) error {
	if _, ok := p.X.Scale.(plot.LogScale); ok {
		// Room for the first and last tick labels.
		p.X.Min, p.X.Max = p.X.Min/1.15, p.X.Max*1.15
	}
	file := filepath.Join(b.o.plots, name)
	if err := p.Save(9*vg.Inch, 6*vg.Inch, file); err != nil {
		return err
	}
	b.plots = append(b.plots, plotFile{Title: title, Path: file})
	return nil
}

func (b *bench) plotTokens(keys []string, by map[string][]*scaleRow) error {
	p := newPlot("Prompt tokens: history replay vs assembled (budget "+thousands(b.o.budget)+")",
		"tool rounds in the conversation (log)", "tokens (log)")
	logAxis(&p.X)
	logAxis(&p.Y)
	p.Legend.Top, p.Legend.Left = true, true
	minX, maxX := 1e18, 0.0
	for i, k := range keys {
		var rep, asm plotter.XYs
		for _, r := range by[k] {
			x := float64(r.Rounds)
			minX, maxX = min(minX, x), max(maxX, x)
			if r.Baseline > 0 {
				rep = append(rep, plotter.XY{X: x, Y: float64(r.Baseline)})
			}
			if r.Assembled > 0 {
				asm = append(asm, plotter.XY{X: x, Y: float64(r.Assembled)})
			}
		}
		c := palette[i%len(palette)]
		if len(rep) > 0 {
			if err := addLine(p, rep, c, false, draw.CircleGlyph{}, "replay, "+k); err != nil {
				return err
			}
		}
		if len(asm) > 0 {
			if err := addLine(p, asm, c, true, draw.TriangleGlyph{}, "assembled, "+k); err != nil {
				return err
			}
		}
	}
	if maxX > 0 {
		bl, err := plotter.NewLine(plotter.XYs{{X: minX, Y: float64(b.o.budget)}, {X: maxX, Y: float64(b.o.budget)}})
		if err != nil {
			return err
		}
		bl.Color, bl.Width, bl.Dashes = color.Gray{0x55}, vg.Points(1), []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(bl)
		p.Legend.Add("token budget", bl)
	}
	headroom(p, 20)
	return b.save(p, "tokens-vs-rounds.png", "Tokens against tool rounds")
}

func (b *bench) plotLatency(keys []string, by map[string][]*scaleRow) error {
	p := newPlot("Assembly latency over REST (p50 solid, p99 dashed)", "tool rounds in the conversation (log)", "milliseconds (log)")
	logAxis(&p.X)
	logAxis(&p.Y)
	p.Legend.Top, p.Legend.Left = true, true
	for i, k := range keys {
		var p50, p99 plotter.XYs
		for _, r := range by[k] {
			p50 = append(p50, plotter.XY{X: float64(r.Rounds), Y: msf(r.Lat.P50)})
			p99 = append(p99, plotter.XY{X: float64(r.Rounds), Y: msf(r.Lat.P99)})
		}
		c := palette[i%len(palette)]
		if err := addLine(p, p50, c, false, draw.CircleGlyph{}, "p50, "+k); err != nil {
			return err
		}
		if err := addLine(p, p99, c, true, draw.TriangleGlyph{}, "p99, "+k); err != nil {
			return err
		}
	}
	// The targets (at 10,000 rounds × 50 branches), for scale.
	for _, t := range []struct {
		ms    float64
		label string
	}{{10, "target p50 ≤ 10 ms (10k rounds × 50 branches)"}, {30, "target p99 ≤ 30 ms"}} {
		tl, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: t.ms}, {X: p.X.Max, Y: t.ms}})
		if err != nil {
			return err
		}
		tl.Color, tl.Width, tl.Dashes = color.Gray{0x55}, vg.Points(1), []vg.Length{vg.Points(2), vg.Points(2)}
		if t.ms == 30 {
			tl.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
		}
		p.Add(tl)
		p.Legend.Add(t.label, tl)
	}
	headroom(p, 4)
	return b.save(p, "latency-vs-rounds.png", "Assembly latency against tool rounds")
}

func (b *bench) plotThroughput() error {
	p := newPlot(fmt.Sprintf("Mixed load (50 %% assemblies, 50 %% tool-result writes), %g s per level", b.o.loadDur.Seconds()),
		"concurrent clients (log)", "per second")
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	var req, asm, res plotter.XYs
	for _, lv := range b.load.Levels {
		x := float64(lv.Clients)
		ticks = append(ticks, plot.Tick{Value: x, Label: strconv.Itoa(lv.Clients)})
		req = append(req, plotter.XY{X: x, Y: rate(lv.Requests, lv.Elapsed)})
		asm = append(asm, plotter.XY{X: x, Y: rate(lv.Assemblies, lv.Elapsed)})
		res = append(res, plotter.XY{X: x, Y: rate(lv.ToolResults, lv.Elapsed)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min = 0
	p.Legend.Top, p.Legend.Left = true, true
	if err := addLine(p, req, palette[0], false, draw.CircleGlyph{}, "HTTP requests/s (all)"); err != nil {
		return err
	}
	if err := addLine(p, asm, palette[1], false, draw.TriangleGlyph{}, "assemblies/s"); err != nil {
		return err
	}
	if err := addLine(p, res, palette[2], true, draw.BoxGlyph{}, "tool results written/s (2 requests each)"); err != nil {
		return err
	}
	headroom(p, 1.4)
	return b.save(p, "throughput-vs-clients.png", "Throughput against concurrent clients")
}
