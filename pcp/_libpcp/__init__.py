"""libpcp behaviour reproduced in Python over the decoded data: values, units, labels, anonymous metrics."""
