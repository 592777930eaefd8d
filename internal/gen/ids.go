package gen

import (
	"math/rand/v2"
	"time"
)

// newRand returns the random source of one session: a PCG stream keyed by
// the corpus seed and the session index, so that any session can be made
// alone, on any worker, and come out the same.
func newRand(seed uint64, index int, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(mix(seed^stream), mix(uint64(index)+0x9e3779b97f4a7c15*(stream+1))))
}

// mix is the splitmix64 finaliser: it spreads nearby inputs far apart.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// appendUUID appends a random version-4 UUID in its canonical text form.
func appendUUID(b []byte, r *rand.Rand) []byte {
	hi, lo := r.Uint64(), r.Uint64()
	hi = hi&^(0xf<<12) | 0x4<<12         // version 4
	lo = lo&^(0x3<<62) | uint64(0x2)<<62 // variant 10
	var raw [16]byte
	for i := 0; i < 8; i++ {
		raw[i] = byte(hi >> (56 - 8*i))
		raw[8+i] = byte(lo >> (56 - 8*i))
	}
	for i, x := range raw {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[x>>4], hexDigits[x&0xf])
	}
	return b
}

func newUUID(r *rand.Rand) string { return string(appendUUID(make([]byte, 0, 36), r)) }

// base62 is the alphabet of Anthropic API ids (msg_01…, toolu_01…, req_011C…).
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// apiID returns prefix followed by n random base-62 characters.
func apiID(r *rand.Rand, prefix string, n int) string {
	b := make([]byte, len(prefix), len(prefix)+n)
	copy(b, prefix)
	var x uint64
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			x = r.Uint64()
		}
		b = append(b, base62[x%62])
		x /= 62
	}
	return string(b)
}

// hexID returns n random lower-case hex digits (agent ids).
func hexID(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = hexDigits[r.IntN(16)]
	}
	return string(b)
}

// epoch is the earliest session start: every timestamp of a corpus derives
// from it, the seed and the session index, never from the clock.
var epoch = time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC).UnixMilli()

// startMillis is the start time of session index of a corpus.
func startMillis(seed uint64, index int) int64 {
	day := int64(mix(seed) % 60)
	return epoch + day*86_400_000 + int64(index)*2_417_000 + int64(mix(seed+uint64(index))%900_000)
}

// appendTime appends a millisecond UTC timestamp as Claude Code writes it:
// 2026-02-11T20:36:45.618Z.
func appendTime(b []byte, ms int64) []byte {
	t := time.UnixMilli(ms).UTC()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	b = appendPad(b, y, 4)
	b = append(b, '-')
	b = appendPad(b, int(mo), 2)
	b = append(b, '-')
	b = appendPad(b, d, 2)
	b = append(b, 'T')
	b = appendPad(b, h, 2)
	b = append(b, ':')
	b = appendPad(b, mi, 2)
	b = append(b, ':')
	b = appendPad(b, s, 2)
	b = append(b, '.')
	b = appendPad(b, int(ms%1000), 3)
	return append(b, 'Z')
}

func appendPad(b []byte, v, width int) []byte {
	var tmp [8]byte
	i := len(tmp)
	for v > 0 || i == len(tmp) {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
	}
	for n := len(tmp) - i; n < width; n++ {
		b = append(b, '0')
	}
	return append(b, tmp[i:]...)
}
