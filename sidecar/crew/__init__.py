"""The crew tier across sidecars: a member's proxy to the lead, and the lead's crew listener."""
