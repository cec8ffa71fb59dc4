module github.com/crawlkeeper/crawlkeeper

go 1.26.8
