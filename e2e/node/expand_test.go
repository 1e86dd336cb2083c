package node

import "testing"

func TestExpandAsTheKubeletDoes(t *testing.T) {
	env := []string{"POD_NAME=envoy-1", "POD_NAMESPACE=shop", "EMPTY="}
	for arg, want := range map[string]string{
		"$(POD_NAMESPACE)/$(POD_NAME)": "shop/envoy-1",
		"--x=$(EMPTY)y":                "--x=y",
		"$(UNSET) stays":               "$(UNSET) stays",
		"$$(POD_NAME) is escaped":      "$(POD_NAME) is escaped",
		"cost: 5$":                     "cost: 5$",
		"$(POD_NAME":                   "$(POD_NAME",
		"a $b c":                       "a $b c",
		"plain":                        "plain",
	} {
		if got := expand(arg, env); got != want {
			t.Errorf("expand(%q) = %q, want %q", arg, got, want)
		}
	}
}
