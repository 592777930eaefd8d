package aggregate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
)

// CalibrationMemo keeps the calibration figures of a run (the refit of the
// calibrated ruler and its cross-validation, which a run whose results come
// from a cache would otherwise spend most of its time on) for a later run
// over the same samples. Keys are hex SHA-256 sums of everything the figures
// are computed from (calibrationKey). A memo that loses, mixes up or damages
// entries costs only the refit: what Load returns is checked against the
// key and used only when it decodes to the exact bytes stored.
type CalibrationMemo interface {
	// Load returns the bytes stored under key, or false.
	Load(key string) ([]byte, bool)
	// Store keeps data under key; failing to is not an error.
	Store(key string, data []byte)
}

// calMemoFormat changes whenever the memo's payload or key does.
const calMemoFormat = "compactbench-calibration-memo/1"

// SetCalibrationMemo makes the summary take its calibration figures from m
// when m holds them for this run's samples, and store them there otherwise.
// It must be called before the first Add (it is ignored afterwards: the
// samples already added would be missing from the key).
func (s *Summary) SetCalibrationMemo(m CalibrationMemo) { s.Rulers.setMemo(m) }

func (s *Rulers) setMemo(m CalibrationMemo) {
	if s.nSamples > 0 || m == nil {
		return
	}
	s.memo, s.memoHash = m, sha256.New()
}

// calibrationKey is the memo key of the run's calibration figures: a
// SHA-256 of the memo format, the cross-validation's constants, the model
// table, the generations by id, the number of samples and calls, and the
// samples log (every sample as crossValidate reads it, in order, fold
// included). memoHash has already taken the log.
func (s *Rulers) calibrationKey() (string, error) {
	models, err := json.Marshal(s.models)
	if err != nil {
		return "", fmt.Errorf("calibration memo: hashing the model table: %w", err)
	}
	h := s.memoHash
	writeKeyPart(h, []byte(calMemoFormat))
	var n [8]byte
	for _, v := range []int{cvFolds, maxCVCalls, s.nSamples, s.sampleCalls, len(s.sampleGens.keys)} {
		binary.LittleEndian.PutUint64(n[:], uint64(v))
		h.Write(n[:])
	}
	writeKeyPart(h, models)
	for _, g := range s.sampleGens.keys {
		writeKeyPart(h, []byte(g))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeKeyPart writes p to h prefixed with its length, so that the parts
// cannot run into each other.
func writeKeyPart(h hash.Hash, p []byte) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
	h.Write(n[:])
	h.Write(p)
}

// calMemoEntry is a memo's payload: the key it was stored under and the
// figures (null when there was nothing to fit).
type calMemoEntry struct {
	Format  string              `json:"format"`
	Key     string              `json:"key"`
	Figures *CalibrationFigures `json:"figures"`
}

// encodeCalMemo is the payload of figures stored under key.
func encodeCalMemo(key string, f *CalibrationFigures) ([]byte, error) {
	return json.Marshal(&calMemoEntry{Format: calMemoFormat, Key: key, Figures: f})
}

// decodeCalMemo returns the figures of a payload stored under key, or an
// error when it is of another format or key, does not decode, or does not
// encode back to the same bytes (so the figures are exactly those stored).
func decodeCalMemo(key string, data []byte) (*CalibrationFigures, error) {
	var e calMemoEntry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("calibration memo: %w", err)
	}
	if e.Format != calMemoFormat || e.Key != key {
		return nil, fmt.Errorf("calibration memo: an entry of format %q, key %.12s", e.Format, e.Key)
	}
	again, err := encodeCalMemo(key, e.Figures)
	if err != nil || !bytes.Equal(again, data) {
		return nil, fmt.Errorf("calibration memo: the entry does not encode back to its bytes")
	}
	return e.Figures, nil
}
