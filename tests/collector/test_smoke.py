def test_collector_starts_and_answers_ping(collector):
    assert collector.rows("SELECT 1 AS one") == [{"one": 1}]
