"""What the journal and the workshop D-DP-PM share above the accounting engine: the base class of a calibrated
gossip method, its parameter table's leading columns, and its runs on the common task under a searched threat
model."""
