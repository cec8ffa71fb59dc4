package dates
import ("testing";"time";"os";"strings";"github.com/crawlkeeper/crawlkeeper")
func TestDbg(t *testing.T){
	p:=New()
	for _,s:=range strings.Split(os.Getenv("DBG"),"|"){
		d,err:=p.ParseDate(s,crawlkeeper.DateOptions{Now:corpusNow})
		lx:=new(lexer); lx.lex(s)
		var ws []string
		for _,tk:=range lx.toks{ if tk.kind==tWord{ k:="?"; if tk.w!=nil{k=string(rune('A'+tk.w.kind))}; ws=append(ws,string(lx.buf[tk.i:tk.j])+":"+k)}}
		t.Logf("%q -> %v %v %v  words=%v", s, d.Time.Format(time.RFC3339), d.DateOnly, err, ws)
	}
}
