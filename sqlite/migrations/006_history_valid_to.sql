-- Changes per week (stats, dashboard) count history rows of the last
-- weeks; without this index that is a scan of the whole history.
CREATE INDEX history_valid_to ON history (valid_to);
