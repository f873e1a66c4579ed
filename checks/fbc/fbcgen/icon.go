package fbcgen

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"strings"
)

// pngIcon draws a small logo-like paletted PNG. It is written without
// compression so the bytes depend only on the pixels, not on the zlib
// implementation of the Go release.
func pngIcon(r *rand.Rand, size int) []byte {
	pal := make(color.Palette, 256)
	for i := range pal {
		pal[i] = color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}
	}
	pal[0] = color.RGBA{0, 0, 0, 0}
	img := image.NewPaletted(image.Rect(0, 0, size, size), pal)
	c := float64(size) / 2
	rad := c * (0.6 + 0.35*r.Float64())
	stripes := 2 + r.IntN(6)
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			dx, dy := float64(x)-c, float64(y)-c
			if dx*dx+dy*dy > rad*rad {
				continue
			}
			idx := 1 + ((x+y)*stripes/size)%8
			if r.IntN(12) == 0 {
				idx = 9 + r.IntN(247)
			}
			img.SetColorIndex(x, y, uint8(idx))
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.NoCompression}
	if err := enc.Encode(&buf, img); err != nil {
		panic(err) // cannot happen with a bytes.Buffer
	}
	return buf.Bytes()
}

// svgIcon returns a small SVG document.
func svgIcon(r *rand.Rand) []byte {
	var b strings.Builder
	b.WriteString(`<svg width="256" height="256" viewBox="0 0 256 256" fill="none" xmlns="http://www.w3.org/2000/svg">` + "\n")
	for i := 0; i < 20+r.IntN(40); i++ {
		fmt.Fprintf(&b, `<path d="M%d %dL%d %dC%d %d %d %d %d %dZ" fill="#%06x"/>`+"\n",
			r.IntN(256), r.IntN(256), r.IntN(256), r.IntN(256), r.IntN(256), r.IntN(256),
			r.IntN(256), r.IntN(256), r.IntN(256), r.IntN(256), r.IntN(1<<24))
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}
