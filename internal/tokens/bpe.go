package tokens

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"

	"github.com/compactbench/compactbench/internal/transcript"
)

// bpe counts exact byte-pair-encoding tokens with one of OpenAI's encodings.
// The vocabulary is compiled into the binary (github.com/tiktoken-go/tokenizer)
// and decoded on first use, so a run that does not ask for a BPE ruler pays
// nothing for it. Text is encoded as ordinary text: special-token strings
// such as "<|endoftext|>" count as the characters they are.
type bpe struct {
	enc  tokenizer.Encoding
	once sync.Once
	c    tokenizer.Codec
}

var (
	o200kCounter  = &bpe{enc: tokenizer.O200kBase}
	cl100kCounter = &bpe{enc: tokenizer.Cl100kBase}
)

func (e *bpe) codec() tokenizer.Codec {
	e.once.Do(func() {
		c, err := tokenizer.Get(e.enc)
		if err != nil {
			panic("tokens: encoding " + string(e.enc) + " missing from the tokenizer build: " + err.Error())
		}
		e.c = c
	})
	return e.c
}

// count returns the number of tokens of s. The codec only fails on invalid
// UTF-8 in strict mode, which is not set; a failure would count 0.
func (e *bpe) count(s string) int {
	if s == "" {
		return 0
	}
	n, _ := e.codec().Count(s)
	return n
}

func (e *bpe) message() int { return 0 }

func (e *bpe) block(b *transcript.Block) int {
	switch b.Kind {
	case transcript.BlockToolUse:
		return e.count(b.ToolName) + e.count(b.Input)
	case transcript.BlockImage:
		return 0
	}
	return e.count(b.Text)
}
