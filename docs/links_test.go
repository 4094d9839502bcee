// Package docs holds miniapi's documentation pages, and this test that
// keeps their links working.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRelativeLinks checks that every relative link in README.md,
// docs/*.md and test/bench/RESULTS.md names a file or directory of the repository and, where it has
// a #fragment, a heading of that page (as GitHub derives anchors).
// Links with a scheme (https:, mailto:) are not followed.
func TestRelativeLinks(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "README.md"), filepath.Join("..", "test", "bench", "RESULTS.md"))
	if len(pages) < 3 {
		t.Fatalf("no pages found: %v", pages)
	}
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, link := range links(string(data)) {
			if err := checkLink(page, link); err != "" {
				t.Errorf("%s: link %q: %s", page, link, err)
			}
		}
	}
}

// linkRE matches inline Markdown links and images: [text](target).
// Text may span lines; the target ends at the first space or ")".
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// schemeRE matches a target with a URL scheme.
var schemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// links returns the targets of the inline links of a Markdown page,
// leaving out fenced code blocks, where "](" is just text.
func links(page string) []string {
	var out []string
	inFence := false
	var prose strings.Builder
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			prose.WriteString(line + "\n")
		}
	}
	for _, m := range linkRE.FindAllStringSubmatch(prose.String(), -1) {
		out = append(out, m[1])
	}
	return out
}

// checkLink returns what is wrong with link, found on page, or "".
func checkLink(page, link string) string {
	if schemeRE.MatchString(link) {
		return ""
	}
	target, fragment, _ := strings.Cut(link, "#")
	file := page
	if target != "" {
		if strings.HasPrefix(target, "/") {
			return "absolute paths do not resolve on GitHub and in a checkout alike; use a relative one"
		}
		file = filepath.Join(filepath.Dir(page), filepath.FromSlash(target))
	}
	info, err := os.Stat(file)
	if err != nil {
		return "no such file"
	}
	if fragment == "" {
		return ""
	}
	if info.IsDir() || !strings.HasSuffix(file, ".md") {
		return "a fragment on something other than a Markdown page"
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	for _, a := range anchors(string(data)) {
		if a == fragment {
			return ""
		}
	}
	return "no heading with that anchor in " + filepath.ToSlash(file)
}

// anchors returns the anchors GitHub gives a page's headings: lower case,
// punctuation but hyphens and underscores dropped, spaces made hyphens,
// and -1, -2... appended to repeats.
func anchors(page string) []string {
	var out []string
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 127:
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out = append(out, a+"-"+strconv.Itoa(n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}
