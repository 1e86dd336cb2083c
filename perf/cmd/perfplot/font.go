package main

import (
	"image"
	"image/color"
	"strings"
)

// glyphs is a 3x5 bitmap font: five rows per character, three bits each
// (4 = left column). Lower case is drawn as upper case.
var glyphs = map[rune][5]uint8{
	'0': {7, 5, 5, 5, 7}, '1': {2, 6, 2, 2, 7}, '2': {7, 1, 7, 4, 7}, '3': {7, 1, 7, 1, 7},
	'4': {5, 5, 7, 1, 1}, '5': {7, 4, 7, 1, 7}, '6': {7, 4, 7, 5, 7}, '7': {7, 1, 1, 2, 2},
	'8': {7, 5, 7, 5, 7}, '9': {7, 5, 7, 1, 7},
	'A': {2, 5, 7, 5, 5}, 'B': {6, 5, 6, 5, 6}, 'C': {7, 4, 4, 4, 7}, 'D': {6, 5, 5, 5, 6},
	'E': {7, 4, 6, 4, 7}, 'F': {7, 4, 6, 4, 4}, 'G': {7, 4, 5, 5, 7}, 'H': {5, 5, 7, 5, 5},
	'I': {7, 2, 2, 2, 7}, 'J': {1, 1, 1, 5, 7}, 'K': {5, 5, 6, 5, 5}, 'L': {4, 4, 4, 4, 7},
	'M': {5, 7, 7, 5, 5}, 'N': {6, 5, 5, 5, 5}, 'O': {7, 5, 5, 5, 7}, 'P': {7, 5, 7, 4, 4},
	'Q': {7, 5, 5, 7, 1}, 'R': {7, 5, 6, 5, 5}, 'S': {7, 4, 7, 1, 7}, 'T': {7, 2, 2, 2, 2},
	'U': {5, 5, 5, 5, 7}, 'V': {5, 5, 5, 5, 2}, 'W': {5, 5, 7, 7, 5}, 'X': {5, 5, 2, 5, 5},
	'Y': {5, 5, 2, 2, 2}, 'Z': {7, 1, 2, 4, 7},
	' ': {}, '.': {0, 0, 0, 0, 2}, ',': {0, 0, 0, 2, 4}, '-': {0, 0, 7, 0, 0}, '/': {1, 1, 2, 4, 4},
	'(': {2, 4, 4, 4, 2}, ')': {2, 1, 1, 1, 2}, ':': {0, 2, 0, 2, 0}, '=': {0, 7, 0, 7, 0},
	'%': {5, 1, 2, 4, 5}, '<': {1, 2, 4, 2, 1}, '>': {4, 2, 1, 2, 4},
}

// drawText writes s at (x, y), top left, each font pixel scale wide.
func drawText(img *image.RGBA, x, y, scale int, s string, c color.Color) {
	for _, r := range strings.ToUpper(s) {
		g := glyphs[r]
		for row := range 5 {
			for col := range 3 {
				if g[row]&(4>>col) == 0 {
					continue
				}
				for dy := range scale {
					for dx := range scale {
						img.Set(x+col*scale+dx, y+row*scale+dy, c)
					}
				}
			}
		}
		x += 4 * scale
	}
}

// textWidth is the width drawText uses for s.
func textWidth(s string, scale int) int { return len(s) * 4 * scale }
