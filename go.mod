module github.com/crawlkeeper/crawlkeeper

go 1.26.8

require (
	github.com/markusmobius/go-dateparser v1.4.7
	golang.org/x/text v0.42.0
)

require (
	github.com/markusmobius/go-dateutil/v2 v2.9.1 // indirect
	github.com/tetratelabs/wazero v1.12.0 // indirect
	github.com/wasilibs/go-re2 v1.12.0 // indirect
	github.com/wasilibs/wazero-helpers v0.0.0-20250123031827-cd30c44769bb // indirect
	golang.org/x/sys v0.48.0 // indirect
)
