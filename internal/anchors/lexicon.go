package anchors

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Lexicons of the `says` text matcher: what a reply or a prompt says, in
// English, Chinese, Japanese, Korean and Spanish (done, approval, go-ahead,
// direction, success, handoff, failure). Entries are matched
// case-insensitively, in prose only (fenced and inline code, paths and
// identifiers are skipped), as whole words for letters of alphabetic
// scripts, and not when a negation comes just before ("not done", "NOT
// complete", "未完成", "没有修复", "완료되지 않") or, for Japanese and
// Korean, a negative ending just after.
var lexicons = map[string][]string{
	// The work is reported done.
	"done": {
		"done", "completed", "complete", "finished", "implemented", "fixed", "resolved", "all set",
		"successfully", "now works", "works now", "is now working", "are now working", "has been added",
		"has been updated", "has been created", "has been fixed", "have been added", "have been updated",
		"ready to use", "up and running", "✅",
		"完成", "已修复", "修复了", "已完成", "搞定", "已实现", "实现了", "已更新", "已添加", "已创建", "已提交", "已推送", "已解决", "解决了", "修好了",
		"完了", "修正しました", "実装しました", "対応しました", "追加しました", "更新しました", "作成しました", "できました", "解決しました", "完成しました",
		"완료", "수정했습니다", "구현했습니다", "추가했습니다", "업데이트했습니다", "해결했습니다", "완성", "수정되었습니다", "생성했습니다",
		"적용했습니다", "변경했습니다", "삭제했습니다", "제거했습니다", "반영했습니다", "마쳤습니다", "적용되었습니다", "변경되었습니다",
		"삭제되었습니다", "제거되었습니다", "반영되었습니다", "추가되었습니다", "해결되었습니다", "수정 완료",
		"listo", "hecho", "completado", "terminado", "implementado", "corregido", "arreglado", "solucionado", "actualizado",
	},
	// The user approves the result.
	"approval": {
		"looks good", "look good", "lgtm", "great", "perfect", "sweet", "awesome", "nice", "excellent", "good job",
		"well done", "works great", "worked like a charm", "it works", "that works", "this works", "thanks", "thank you",
		"love it", "beautiful", "amazing",
		"很好", "不错", "完美", "谢谢", "没问题", "好的", "可以了", "太好了", "棒",
		"いいね", "完璧", "ありがとう", "素晴らしい", "良いです", "いい感じ",
		"좋아", "좋네", "좋습니다", "감사", "완벽", "훌륭", "잘했", "잘 했", "고마워", "고맙", "최고", "굿",
		"perfecto", "genial", "excelente", "gracias", "muy bien",
	},
	// The user gives the go-ahead to carry out what was proposed.
	"go-ahead": {
		"go ahead", "do it", "proceed", "go for it", "please do", "yes please", "sounds good", "let's do it",
		"lets do it", "make it so", "implement it", "ship it", "commit it", "push it", "commit and push", "yes", "yep",
		"yeah", "ok", "okay", "sure", "approved", "agreed", "confirmed", "let's do option", "lets do option",
		"go with option", "option 1", "option 2", "option a", "option b",
		"同意", "确认", "確認", "执行", "全部执行", "继续", "开始吧", "可以push", "提交吧", "照做", "就这样", "按这个", "好", "行", "可以",
		"お願いします", "進めて", "実行して", "やって", "それで", "はい", "了解", "承認",
		"진행", "시작해", "그렇게 해", "그렇게 하자", "네", "응", "좋아요", "오케이", "ㅇㅋ", "ㄱㄱ", "고고",
		"adelante", "hazlo", "procede", "continúa", "dale", "sí", "vale", "de acuerdo",
	},
	// The user turns the work in a new direction or starts a new task.
	"direction": {
		"now let's", "now lets", "let's move on", "lets move on", "next,", "next step", "instead", "switch to",
		"change of plan", "new task", "another thing", "moving on", "on to the next", "let's now", "now i want",
		"now can you", "now please", "next task",
		"接下来", "换成", "改成", "另外", "下一步", "现在我们", "然后",
		"次に", "代わりに", "今度は", "別の",
		"다음", "이제", "대신", "다른 작업",
		"ahora", "en vez", "en lugar", "siguiente", "a continuación",
	},
	// The user reports success seen outside the session.
	"success": {
		"it works", "works now", "working now", "worked", "opened", "is up", "deployed", "passed", "passes",
		"now shows", "shows up", "loads now", "it's working", "its working", "fixed it",
		"成功了", "可以了", "好了", "出来了", "能用了", "正常了", "跑通了",
		"動いた", "できた", "動きました", "成功しました",
		"됐어", "됩니다", "작동", "성공", "잘 돼", "잘돼", "잘 되", "잘되", "되네",
		"funciona", "ya funciona", "sirve",
	},
	// The reply hands the check to the user: try it, refresh, tell me.
	"handoff": {
		"let me know if", "please test", "please try", "try it out", "give it a try", "refresh the page", "hard refresh",
		"you can now test", "please verify", "test it and", "reload the page", "restart the app", "restart your",
		"请测试", "测试一下", "试一下", "刷新页面", "请验证", "请确认", "重启后",
		"試してみてください", "確認してください", "お試しください", "再読み込み", "リロード",
		"테스트 해보", "테스트해보", "확인해 보", "확인해보", "새로고침", "알려주세요", "시도해 보", "시도해보",
		"prueba", "pruébalo", "avísame", "recarga la página",
	},
	// Something still fails (said by the user, or in a reply).
	"failure": {
		"still broken", "doesn't work", "does not work", "not working", "didn't work", "did not work",
		"still fail", "still error", "still getting", "still not", "still the same", "broken", "crash", "wrong",
		"error", "fails", "failed", "failing", "same issue", "same problem",
		"还是不行", "不行", "报错", "错误", "失败", "没用", "没有效果", "有问题",
		"動かない", "エラー", "失敗", "うまくいかない",
		"안 돼", "안돼", "안 되", "안되", "오류", "에러", "실패", "문제가", "여전히", "아직도", "안 없어", "안 지워", "안 바뀌", "안 보여", "안 나와",
		"no funciona", "sigue fallando", "falla", "fallo",
	},
}

// LexiconNames lists the lexicons of the says matcher.
func LexiconNames() []string {
	out := make([]string, 0, len(lexicons))
	for k := range lexicons {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// negators come just before a word and negate it.
var (
	negWords  = []string{"not", "never", "n't", "no", "nothing", "isn't", "aren't", "wasn't", "hasn't", "haven't", "didn't", "doesn't", "nor", "without", "yet to", "no está", "nunca"}
	negCJK    = []string{"未", "没", "沒", "不", "非", "無", "无", "안 ", "못 ", "안", "못"}
	negSuffix = []string{"ていません", "ていない", "しない", "できない", "できません", "되지 않", "하지 않", "지 않", "않았", "않습", "못했", "ません", "ない"}
)

// Prose returns the prose of a text: fenced code blocks, inline code spans
// and lines that look like command output or code (indented by four spaces
// or a tab, or starting with $ or >) become spaces, so offsets stay close.
func Prose(s string) string {
	if !strings.ContainsAny(s, "`\t") && !strings.Contains(s, "\n    ") && !strings.Contains(s, "\n$") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	fence := false
	for line := range strings.Lines(s) {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
			b.WriteByte('\n')
			continue
		}
		if fence || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") || strings.HasPrefix(t, "$ ") {
			b.WriteByte('\n')
			continue
		}
		in := false
		for _, r := range line {
			if r == '`' {
				in = !in
				b.WriteByte(' ')
				continue
			}
			if in {
				b.WriteByte(' ')
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isWordRune is a rune that joins an alphabetic word or identifier.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || r == '-' || r == '/' || r == '\\' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
	}
	return unicode.IsLetter(r) && !isCJK(r) || unicode.IsDigit(r)
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// Says reports whether the prose of text says one of the lexicon's entries
// unnegated. lower is strings.ToLower of the text (passed in so that a
// caller testing several lexicons lowers once).
func Says(lexicon string, lower string) bool {
	return says(lexicon, Prose(lower))
}

// says is Says on Prose of the lower-cased text, which an evaluation
// computes once per text for all its says leaves.
func says(lexicon string, p string) bool {
	for _, e := range lexicons[lexicon] {
		for off := 0; off < len(p); {
			i := strings.Index(p[off:], e)
			if i < 0 {
				break
			}
			i += off
			off = i + len(e)
			if atWordEdges(p, i, i+len(e), e) && !negated(p, i, i+len(e)) && !(asks[lexicon] && inQuestion(p, i+len(e))) {
				return true
			}
		}
	}
	return false
}

// asks are the lexicons a question does not say: "can I delete these?",
// "是否可以删除？" ask, they neither approve nor give the go-ahead.
var asks = map[string]bool{"approval": true, "go-ahead": true}

// inQuestion reports whether the sentence that goes on at p[j:] ends with a
// question mark.
func inQuestion(p string, j int) bool {
	k := strings.IndexAny(p[j:], ".!?。！？\n")
	if k < 0 {
		return false
	}
	r, _ := utf8.DecodeRuneInString(p[j+k:])
	return r == '?' || r == '？'
}

// hanParticles may follow a one-character Chinese entry (好吧, 行了).
const hanParticles = "吧了的啊呀哦嘛啦"

// atWordEdges reports whether p[i:j] stands as a word: an entry starting or
// ending with a letter of an alphabetic script must not touch another such
// letter, a digit, '_', '-', '/' or '\' (so identifiers and paths such as
// is_done, done.txt or src/fixed/ do not count); an entry touching a '.'
// followed by a letter (file.done, done.py) does not count either. Korean
// writes words apart and adds endings to them: a Hangul entry must start a
// word (진행 in 진행해줘, not 완료 inside 미완료), and a one-syllable one
// (네, 응) must be the whole word, not 네 of 네트워크 or 응 of 응답. A
// one-character Chinese entry (好, 行) must stand alone or before a
// sentence particle (好吧), not inside 好像 or 执行.
func atWordEdges(p string, i, j int, e string) bool {
	first, _ := utf8.DecodeRuneInString(e)
	last, _ := utf8.DecodeLastRuneInString(e)
	if unicode.Is(unicode.Han, first) && utf8.RuneCountInString(e) == 1 {
		// 好 of 好像, 行 of 执行 or 进行 are not the word
		if r, _ := utf8.DecodeLastRuneInString(p[:i]); i > 0 && unicode.Is(unicode.Han, r) {
			return false
		}
		if r, _ := utf8.DecodeRuneInString(p[j:]); j < len(p) && unicode.Is(unicode.Han, r) && !strings.ContainsRune(hanParticles, r) {
			return false
		}
	}
	if unicode.Is(unicode.Hangul, first) {
		if r, _ := utf8.DecodeLastRuneInString(p[:i]); i > 0 && unicode.Is(unicode.Hangul, r) {
			return false
		}
		if r, _ := utf8.DecodeRuneInString(p[j:]); utf8.RuneCountInString(e) == 1 && j < len(p) && unicode.Is(unicode.Hangul, r) {
			return false
		}
	}
	if !isCJK(first) && unicode.IsLetter(first) && i > 0 {
		r, _ := utf8.DecodeLastRuneInString(p[:i])
		if isWordRune(r) {
			return false
		}
		if r == '.' && i > 1 {
			q, _ := utf8.DecodeLastRuneInString(p[:i-1])
			if isWordRune(q) {
				return false
			}
		}
	}
	if !isCJK(last) && unicode.IsLetter(last) && j < len(p) {
		r, n := utf8.DecodeRuneInString(p[j:])
		if isWordRune(r) {
			return false
		}
		if r == '.' && j+n < len(p) {
			q, _ := utf8.DecodeRuneInString(p[j+n:])
			if isWordRune(q) {
				return false
			}
		}
		if r == '(' {
			return false // a call: done(), fixed(x)
		}
	}
	return true
}

// negated reports whether p[i:j] is negated: a negating word among the
// three words before it, a negating character just before a CJK entry, or
// a negative ending just after it.
func negated(p string, i, j int) bool {
	before := p[max(0, i-24):i]
	// the start of the sentence bounds the look-back
	if k := strings.LastIndexAny(before, ".!?。！？\n"); k >= 0 {
		before = before[k+1:]
	}
	words := strings.Fields(before)
	if len(words) > 3 {
		words = words[len(words)-3:]
	}
	for _, w := range words {
		w = strings.Trim(w, ",;:()\"'")
		if strings.HasSuffix(w, "n't") {
			return true
		}
		for _, n := range negWords {
			if w == n {
				return true
			}
		}
	}
	tb := strings.TrimRight(p[max(0, i-8):i], " ")
	for _, n := range negCJK {
		if strings.HasSuffix(tb, strings.TrimSpace(n)) && (isCJK(firstRune(p[i:])) || strings.HasSuffix(n, " ")) {
			return true
		}
	}
	after := p[j:min(len(p), j+18)]
	after = strings.TrimLeft(after, " ")
	for _, n := range negSuffix {
		if strings.HasPrefix(after, n) || strings.HasPrefix(after, "되"+n) || strings.HasPrefix(after, "し"+n) {
			return true
		}
	}
	return false
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}
