package sqlite

import "testing"

// A page packed in another order than the index's comes back in (rule
// column, id) order, with the cursor on the greatest row, as SQL does
// not promise the order in which group_concat sees its rows.
func TestParseDueOrdersThePage(t *testing.T) {
	got, err := parseDue("3,1,5,20;1,2,6,10;2,1,7,20;4,1,8,15")
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := []int64{1, 4, 2, 3}
	if len(got) != len(wantIDs) {
		t.Fatalf("got %d rows, want %d", len(got), len(wantIDs))
	}
	for i, id := range wantIDs {
		if got[i].ID != id {
			t.Fatalf("row %d is record %d, want %d (page %+v)", i, got[i].ID, id, got)
		}
	}
	if got[0].Version != 2 || got[0].LastUpdatedAt.UnixMicro() != 6 {
		t.Errorf("record 1 read as version %d, updated %d; want 2, 6", got[0].Version, got[0].LastUpdatedAt.UnixMicro())
	}
	if last := got[len(got)-1]; last.At.UnixMicro() != 20 {
		t.Errorf("cursor at %d, want 20", last.At.UnixMicro())
	}
	if _, err := parseDue("1,2,x,4"); err == nil {
		t.Error("a bad value was read")
	}
}
