package dashboard

import (
	"net/http"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
)

// loginData is the login page's data. The token typed in is never echoed
// back, in the page or in a log.
type loginData struct {
	Next string
	Open bool
}

func (d *dash) authRequired() bool { return d.o.Auth != nil && d.o.Auth.AuthRequired() }

func (d *dash) loginPage(w http.ResponseWriter, r *http.Request) {
	v := &view{Title: "Log in", Now: d.o.Now(), Status: http.StatusOK, Auth: d.authRequired(),
		Data: loginData{Next: localNext(r.URL.Query().Get("next")), Open: !d.authRequired()}}
	d.render(w, "login", v)
}

// login checks the token for the read scope and keeps it in an HttpOnly
// cookie that only this site's own requests carry (SameSite=Strict),
// marked Secure when the dashboard is served over TLS.
func (d *dash) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	v := &view{Title: "Log in", Now: d.o.Now(), Status: http.StatusOK, Auth: d.authRequired()}
	if err := r.ParseForm(); err != nil {
		v.Status, v.Error = http.StatusBadRequest, "could not read the form"
		v.Data = loginData{Next: "/"}
		d.render(w, "login", v)
		return
	}
	next := localNext(r.PostFormValue("next"))
	if !d.authRequired() {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	tok := strings.TrimSpace(r.PostFormValue("token"))
	name, err := d.o.Auth.CheckToken(tok, crawlkeeper.ScopeRead)
	if err != nil {
		v.Status = httpapi.StatusOf(crawlkeeper.ErrorCode(err))
		if crawlkeeper.ErrorCode(err) == crawlkeeper.EFORBIDDEN {
			v.Error = "this token lacks the read scope the dashboard needs"
		} else {
			v.Error = "unknown token"
		}
		v.Data = loginData{Next: next}
		d.render(w, "login", v)
		return
	}
	d.o.Logger.Info("dashboard login", "token", name)
	http.SetCookie(w, &http.Cookie{Name: httpapi.TokenCookie, Value: httpapi.TokenCookieValue(tok), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (d *dash) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: httpapi.TokenCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
