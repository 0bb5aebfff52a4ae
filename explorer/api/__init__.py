"""What the front ends share: the requests they take and the answers they give, declared once."""
