package condition

// MaxConditionMessage is the API server's limit on a condition message
// (metav1.Condition.message, maxLength 32768 bytes).
const MaxConditionMessage = 32768

// CapMessage cuts s to at most n bytes on a rune boundary, marking the cut,
// so a message quoting a long input value still fits the API server and
// the status is written rather than refused.
func CapMessage(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := max(n-len(mark), 0)
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }
