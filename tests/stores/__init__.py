"""Tests of the run stores (reactloop/_durable/_stores/)."""
