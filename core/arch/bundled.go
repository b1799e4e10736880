package arch

import (
	"embed"
	"fmt"
	"path"
	"slices"
	"strings"
)

// configs holds HuggingFace config.json files of well-known models, written from their
// model cards (only the fields that shape cost).
//
//go:embed configs/*.json
var configs embed.FS

// aliases are short names for bundled configs.
var aliases = map[string]string{
	"gpt2-small":           "gpt2",
	"bert-base":            "bert-base-uncased",
	"bert-large":           "bert-large-uncased",
	"llama-3-8b":           "meta-llama-3-8b",
	"mistral-7b":           "mistral-7b-v0.1",
	"mixtral-8x7b":         "mixtral-8x7b-v0.1",
	"mixtral-8x22b":        "mixtral-8x22b-v0.1",
	"llama-4-scout":        "llama-4-scout-17b-16e",
	"llama-4-maverick":     "llama-4-maverick-17b-128e",
	"qwen1.5-moe":          "qwen1.5-moe-a2.7b",
	"nemotron-4-340b-base": "nemotron-4-340b",
	"minitron-4b-base":     "minitron-4b",
}

// bundledNames are the names of the files in configs/, without .json, sorted (a test
// checks them against the directory). They are listed, not read from configs: reading
// the directory brings io/fs's FileInfo, whose ModTime makes the linker keep time.Time's
// formatting and parsing, and the configs themselves, into any program that lists the
// names: the browser page lists them and reads no config (about 170 KB of main.wasm).
var bundledNames = []string{
	"bert-base-uncased", "bert-large-uncased",
	"deepseek-v2", "deepseek-v2-lite", "deepseek-v3",
	"gemma-2b", "gemma-7b",
	"gpt-oss-120b", "gpt-oss-20b",
	"gpt2", "gpt2-large", "gpt2-medium", "gpt2-xl",
	"llama-2-70b", "llama-2-7b", "llama-3.1-70b", "llama-3.2-1b",
	"llama-4-maverick-17b-128e", "llama-4-scout-17b-16e",
	"meta-llama-3-8b", "minitron-4b",
	"mistral-7b-v0.1", "mixtral-8x22b-v0.1", "mixtral-8x7b-v0.1",
	"nemotron-4-340b",
	"qwen1.5-moe-a2.7b", "qwen2-7b", "qwen3-235b-a22b", "qwen3-30b-a3b",
}

// BundledNames lists the bundled configs by name (without aliases), sorted.
func BundledNames() []string { return slices.Clone(bundledNames) }

// BundledConfig returns the config.json of a bundled model by name or alias
// (case-insensitive): "gpt2-xl", "llama-3-8b", "mixtral-8x7b".
func BundledConfig(name string) ([]byte, bool) {
	n := strings.ToLower(name)
	if full, ok := aliases[n]; ok {
		n = full
	}
	if n == "" || strings.ContainsAny(n, "/\\") || strings.HasPrefix(n, ".") {
		return nil, false
	}
	data, err := configs.ReadFile(path.Join("configs", n+".json"))
	return data, err == nil
}

// Bundled parses a bundled config by name or alias; the Arch is named after it.
func Bundled(name string) (*Arch, error) {
	data, ok := BundledConfig(name)
	if !ok {
		return nil, fmt.Errorf("unknown bundled config %q; bundled: %s", name, strings.Join(BundledNames(), ", "))
	}
	a, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("bundled config %s: %w", name, err)
	}
	a.Name = strings.ToLower(name)
	return a, nil
}
