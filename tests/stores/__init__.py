"""Tests of the run stores (reactloop/_stores/)."""
