-- Full-text search (see search.go). search_text holds the record's folded,
-- tokenised text, computed in Go at prepare time (crawlkeeper.SearchText),
-- with every token followed by "__" (see encodeSearchText): InnoDB's
-- full-text parser skips tokens shorter than innodb_ft_min_token_size (3
-- by default, a server setting) and stop words ("und", "the", "de"), and
-- MariaDB has no ngram parser for CJK bigrams; the suffix makes every
-- token long enough and never a stop word, on MySQL and MariaDB alike.
-- NULL marks a record written before search existed, which `check`
-- reports and `crawlkeeper search --reindex` fills in.
--
-- InnoDB updates a FULLTEXT index when the transaction that wrote the row
-- commits, so the index follows every insert, change, move and delete of
-- the records. Each table's column and index come in one statement.
ALTER TABLE active ADD COLUMN search_text MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL, ADD FULLTEXT INDEX active_search (search_text);
ALTER TABLE archive ADD COLUMN search_text MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL, ADD FULLTEXT INDEX archive_search (search_text);
